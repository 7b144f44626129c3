"""Multibody contact model: any number of reduced linear bodies joined by contact and tied interfaces.

A :class:`Body` is a linear substructure ``M q'' + C q' + K q = f(t) + contact forces`` over its
coordinates ``q`` (m), with node positions ``X`` (m) and the map node -> (x, y) coordinate of
each node (-1 where the node is fixed), built from plain matrices, a :class:`Substructure` or a
Craig-Bampton model. A body is plane (``X`` of shape (N, 2), two DOFs per node) or solid (``X``
(N, 3), three DOFs per node: x, y, z; a 3D substructure gives one); the bodies of one model are
all plane or all solid. Some coordinates may be prescribed (a driven body: ``u = v t`` or any
``u(t)``); the others are free.

:class:`MultibodyModel` gathers the bodies, assembles the tied ones (primal assembly: the tied
coordinates are one coordinate, the null space of the tie rows) and works in the mass-normalised
free modes of each assembled group of free coordinates, ``q_free = T eta``, ``T' M T = I``,
``T' K T = diag(omega^2)``: the inverse mass of the modal coordinates is the identity, so that the
contact kernel's diagonal is ``w = h^2`` for every coordinate. Damping ``T' C T`` is kept whole
(explicit, like the loads); the contact rows of :mod:`fesub.contact.interface` are expressed over
the stacked modal coordinates ``eta`` of all groups by :class:`NodeRows`.

Units: SI (m, kg, N, s).
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Mapping

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ...errors import ModelError, ParameterError, check_positive
from ..geometry import SegmentSet
from .checks import call_checked, check_definite, check_interface, check_modal_forces
from .interfaces import ContactInterface, TiedInterface
from .nodes import NodeRows
from .contacts3d import prepare_surface
from .surfaces import ContactInterface3D

__all__ = ["Body", "MultibodyModel"]


def _dense(name, A, n=None):
    try:
        A = A.toarray() if sp.issparse(A) else np.array(A, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a square matrix of real numbers, got {A!r:.60}") from None
    if A.ndim != 2 or A.shape[0] != A.shape[1] or (n is not None and A.shape[0] != n):
        size = "" if n is None else f" of size {n}"
        raise ParameterError(f"{name} must be a square matrix{size}, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ParameterError(f"{name} contains NaN or inf")
    return 0.5 * (A + A.T)


def _dim(sub) -> int:
    """Displacement components per node of a substructure (2 plane, 3 solid)."""
    return int(getattr(sub, "dim", 2))



def _motion_words(body, k: int) -> str:
    """What a prescribed motion is, for an error message."""
    return f"prescribed motion (u in m, v in m/s, a in m/s^2) of coordinate {k} of body {body.name!r}"


def _load_words(body) -> str:
    """What a body's loads are, for an error message."""
    return f"loads of body {body.name!r} (a force vector in N)"

class Body:
    """A reduced linear body: matrices, node geometry, prescribed motion, loads, output channels.

    Parameters
    ----------
    M, K : (n, n) arrays or sparse
        Mass (kg) and stiffness (N/m) over the body's coordinates (symmetrised).
    X : (N, 2) or (N, 3) array
        Reference node positions (m): a plane body (x, y) or a solid one (x, y, z).
    node_dofs : int array of the shape of ``X``
        Coordinate of the x, y (and z) displacement of each node; -1: fixed (zero displacement), -2:
        not available (an interior node of a reduced model: it cannot be in an interface).
    C : (n, n) array, optional
        Viscous damping (N s/m); default none.
    name : str
    prescribed : dict coordinate -> float or callable, optional
        Prescribed coordinates: a float ``v`` means ``u = v t`` (m/s); a callable ``t -> (u, v, a)``
        gives displacement (m), velocity (m/s) and acceleration (m/s^2).
    loads : (n,) array or callable ``t -> (n,) array``, optional
        External forces (N) on the coordinates (on prescribed coordinates they do nothing).
    outputs : dict name -> coordinate, optional
        Output channels (displacement and velocity of that coordinate).

    Notes
    -----
    ``body.dim`` is 2 for a plane body, 3 for a solid one (``X.shape[1]``).
    """

    def __init__(self, M, K, X, node_dofs, C=None, *, name: str = "body", prescribed=None, loads=None,
                 outputs=None):
        self.M = _dense("M", M)
        n = self.M.shape[0]
        self.K = _dense("K", K, n)
        self.C = np.zeros((n, n)) if C is None else _dense("C", C, n)
        self.name = str(name)
        X = np.array(X, dtype=float)
        nd = np.array(node_dofs)
        if X.ndim != 2 or X.shape[1] not in (2, 3) or not np.all(np.isfinite(X)):
            raise ParameterError(f"X must be finite (N, 2) or (N, 3) node positions in m, got shape {X.shape}")
        if nd.shape != X.shape or nd.dtype.kind not in "iu" or nd.min(initial=0) < -2 or nd.max(initial=-1) >= n:
            raise ParameterError(f"node_dofs must be an integer array of shape {X.shape} with entries -2..{n - 1}")
        self.X, self.node_dofs = X, nd.astype(np.int64)
        self.prescribed = {}
        for k, v in (prescribed or {}).items():
            if not isinstance(k, numbers.Integral) or not 0 <= k < n:
                raise ParameterError(f"prescribed coordinate must be an integer in 0..{n - 1}, got {k!r}")
            if not callable(v):
                v = float(v)
                if not np.isfinite(v):
                    raise ParameterError(f"prescribed velocity of coordinate {k} must be finite (m/s)")
            self.prescribed[int(k)] = v
        self.p_idx = np.array(sorted(self.prescribed), dtype=np.int64)
        # constant velocities of the prescribed coordinates (None when one motion is a callable)
        self._v = None if any(callable(v) for v in self.prescribed.values()) else \
            np.array([self.prescribed[k] for k in self.p_idx], dtype=float)
        # the same motion given to many coordinates (a driven edge) is called once per time:
        # the constant velocities (places in p_idx, values) and each distinct callable with its places
        vals = [self.prescribed[k] for k in self.p_idx]
        self._v_at = np.array([j for j, v in enumerate(vals) if not callable(v)], dtype=np.int64)
        self._v_val = np.array([v for v in vals if not callable(v)], dtype=float)
        groups = {}  # key -> (callable, places); equal callables (a bound method got twice) share one
        for j, v in enumerate(vals):
            if callable(v):
                try:
                    key = (0, v, hash(v))
                except TypeError:  # an unhashable callable object: grouped by identity only
                    key = (1, id(v))
                groups.setdefault(key, (v, []))[1].append(j)
        # (None: the callable drives every prescribed coordinate, a driven edge); the words of an
        # error message about it are formed only when there is one
        self._m_groups = [(f, None if len(js) == len(vals) else np.array(js, dtype=np.int64),
                           functools.partial(_motion_words, self, int(self.p_idx[js[0]])))
                          for f, js in groups.values()]
        self.f_idx = np.setdiff1d(np.arange(n), self.p_idx)
        if loads is not None and not callable(loads):
            loads = np.array(loads, dtype=float)
            if loads.shape != (n,) or not np.all(np.isfinite(loads)):
                raise ParameterError(f"loads must be a finite ({n},) force vector (N) or a callable of t")
        self.loads = loads
        self._load_words = functools.partial(_load_words, self)  # an error message's words, formed on error
        self.outputs = {}
        for k, v in (outputs or {}).items():
            if not isinstance(v, numbers.Integral) or not 0 <= v < n:
                raise ParameterError(f"output channel {k!r} must name a coordinate in 0..{n - 1}, got {v!r}")
            self.outputs[str(k)] = int(v)

    @property
    def n(self) -> int:
        return self.M.shape[0]

    @property
    def dim(self) -> int:
        # 2 for a plane body, 3 for a solid one (displacement components per node; documented
        # in the class docstring: a property docstring here would be one more 'dim' target)
        return int(self.X.shape[1])

    def motion(self, t: float):
        """(u, v, a) of the prescribed coordinates at time ``t`` (s), in the order of ``p_idx``."""
        out = np.zeros((3, self.p_idx.size))
        if self._v_at.size:
            out[0, self._v_at], out[1, self._v_at] = self._v_val * t, self._v_val
        for f, js, what in self._m_groups:
            uva = call_checked(f, t, (3,), what)
            out[:, js if js is not None else slice(None)] = uva[:, None]
        return out

    def load(self, t: float) -> np.ndarray:
        """External force vector (N) at time ``t``."""
        if self.loads is None:
            return np.zeros(self.n)
        if not callable(self.loads):
            return self.loads
        return call_checked(self.loads, t, (self.n,), self._load_words)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_substructure(cls, sub, *, name=None, **kw):
        """Body of a whole (unreduced) :class:`~fesub.substructure.Substructure`: its retained DOFs
        are the coordinates, clamped node components are fixed; ``prescribed``, ``loads`` and
        ``outputs`` are given over model DOFs (``sub.dofs(...)``). A solid substructure (a
        :class:`~fesub.fe.SolidMesh`) gives a solid body (x, y, z per node)."""
        dm = sub.dofmap
        dim = _dim(sub)
        index = np.full(dm.n_dofs, -1, np.int64)
        index[sub.retained] = np.arange(sub.retained.size)
        nd = np.column_stack([index[dm.dofs(np.arange(dm.n_nodes), c)] for c in "xyz"[:dim]])
        return cls(sub.M, sub.K, sub.mesh.points[:, :dim], nd, sub.C, name=name or sub.name, **kw)

    @classmethod
    def from_assembly(cls, assembly, *, name: str = "assembly", **kw):
        """Body of a :class:`~fesub.substructure.SubstructureAssembly`: its primal system
        ``L' M L``, ``L' K L``, ``L' C L`` (kg, N/m, N s/m) over the columns of ``L``, the nodes of
        every substructure in assembly order (:meth:`~fesub.substructure.SubstructureAssembly.primal_nodes`;
        tied nodes share their coordinates). ``prescribed``, ``loads`` and ``outputs`` as in
        :class:`Body`, over the primal coordinates
        (:meth:`~fesub.substructure.SubstructureAssembly.coordinate` finds them)."""
        _, Mp, Kp, Cp = assembly.primal()
        X, nd = assembly.primal_nodes()
        return cls(Mp, Kp, X, nd, Cp, name=name, **kw)

    @classmethod
    def from_craig_bampton(cls, cb, *, name=None, prescribed=None, loads=None, outputs=None):
        """Body of a Craig-Bampton model (built from a Substructure): coordinates q = [eta; u_b],
        damping the substructure's Rayleigh damping. Nodes whose x and y (and, solid, z) DOFs are
        boundary (or clamped) DOFs can be in interfaces. ``prescribed`` (values as in :class:`Body`),
        ``loads`` (dict model DOF -> force in N, constant) and ``outputs`` (name -> model DOF)
        name model DOFs; ``loads`` may instead be an (n_q,) array of constant generalised forces
        over q or a callable ``t -> (n_q,)`` of them (N; ``cb.project(f)`` of a full load vector)."""
        sub = cb.substructure
        if sub is None:
            raise ModelError("the Craig-Bampton model must be built from a Substructure")
        dm = sub.dofmap
        dim = _dim(sub)
        qpos = {int(d): cb.n_modes + i for i, d in enumerate(cb.boundary)}
        nd = np.full((dm.n_nodes, dim), -2, np.int64)
        for c, comp in enumerate("xyz"[:dim]):
            g = dm.dofs(np.arange(dm.n_nodes), comp)
            j = np.searchsorted(sub.retained, g)
            kept = (j < sub.retained.size) & (sub.retained[np.minimum(j, sub.retained.size - 1)] == g)
            nd[~kept, c] = -1
            for i in np.flatnonzero(kept):
                nd[i, c] = qpos.get(int(j[i]), -2)
        given = callable(loads) or isinstance(loads, np.ndarray)
        f = loads if given else None
        if not given and loads:
            f = np.zeros(cb.n_dofs)
            for d, v in loads.items():
                f[cb.coordinate_index([d])[0]] += float(v)
        pres = {int(cb.coordinate_index([d])[0]): v for d, v in (prescribed or {}).items()}
        outs = {k: int(cb.coordinate_index([d])[0]) for k, d in (outputs or {}).items()}
        return cls(cb.Mr, cb.Kr, sub.mesh.points[:, :dim], nd, cb.rayleigh(sub.alpha, sub.beta), name=name or sub.name,
                   prescribed=pres, loads=f, outputs=outs)


class MultibodyModel:
    """Reduced bodies joined by contact and tied interfaces, in modal coordinates.

    The bodies are all plane or all solid (``model.dim`` 2 or 3, the displacement components per
    node); between solid bodies the interfaces are node-to-surface
    (:class:`~fesub.contact.engine.surfaces.ContactInterface3D`).

    Parameters
    ----------
    bodies : sequence of :class:`Body`
        The reduced bodies: mass (kg), stiffness (N/m) and damping (N s/m) matrices, node
        positions (m), prescribed motions and loads (N); names must differ.
    interfaces : sequence of :class:`~fesub.contact.engine.interfaces.ContactInterface`, optional
        Frictional contacts between bodies (friction coefficients dimensionless); default none.
        Between solid bodies: :class:`~fesub.contact.engine.surfaces.ContactInterface3D`
        (node-to-surface).
    ties : sequence of :class:`~fesub.contact.interface.TiedInterface`, optional
        Bonded node pairs (equal displacements, m); tied bodies are assembled into one group
        whose free modes are computed together. Default none.
    modal_cutoff_hz : float, optional
        Keep only the free modes of each group at or below this frequency (Hz; rigid-body modes
        are always kept): an approximation that enlarges the stable step and loses the
        high-frequency content. Default: every mode.

    Attributes
    ----------
    n_modes : int
        Number of stacked modal coordinates.
    omega2 : (n_modes,) squared natural frequencies (rad^2/s^2; rigid-body modes 0) of the free
        coordinates of each group of tied bodies.
    Cm : (n_modes, n_modes) modal damping (1/s), block-diagonal by group.
    cols[b] : slice of the modal coordinates of body b's group; ``T_body[b]`` the map from them to
        the body's free coordinates.
    """

    def __init__(self, bodies, interfaces=(), ties=(), *, modal_cutoff_hz: float | None = None):
        self.bodies = list(bodies)
        if modal_cutoff_hz is not None:
            modal_cutoff_hz = check_positive("modal_cutoff_hz (Hz)", modal_cutoff_hz)
        self.modal_cutoff_hz = modal_cutoff_hz
        if not self.bodies or not all(isinstance(b, Body) for b in self.bodies):
            raise ParameterError("bodies must be a non-empty sequence of Body objects")
        names = [b.name for b in self.bodies]
        if len(set(names)) != len(names):
            raise ParameterError(f"body names must differ, got {names}")
        dims = {b.dim for b in self.bodies}
        if len(dims) != 1:
            raise ParameterError(f"the bodies of a model must be all plane (X of shape (N, 2)) or all solid "
                                 f"((N, 3)), got dimensions {[b.dim for b in self.bodies]}")
        # 2 (plane bodies) or 3 (solid bodies): displacement components per node
        self.dim = dims.pop()
        self.interfaces = list(interfaces)
        self.ties = list(ties)
        kind = ContactInterface3D if self.dim == 3 else ContactInterface
        if not all(isinstance(i, kind) for i in self.interfaces):
            raise ParameterError(f"interfaces must be {kind.__name__} objects (between "
                                 f"{'solid' if self.dim == 3 else 'plane'} bodies)")
        if not all(isinstance(i, TiedInterface) for i in self.ties):
            raise ParameterError("ties must be TiedInterface objects")
        self._assemble_groups()
        self._prepare_forces()
        self._prepare_interfaces()

    def body_index(self, key) -> int:
        """Index of a body given by index or name."""
        if isinstance(key, numbers.Integral) and 0 <= key < len(self.bodies):
            return int(key)
        for i, b in enumerate(self.bodies):
            if b.name == key:
                return i
        raise ParameterError(f"no body {key!r}; bodies are {[b.name for b in self.bodies]}")

    # ------------------------------------------------------------------ tied groups and modes
    def _groups(self):
        parent = list(range(len(self.bodies)))

        def root(i):
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for tie in self.ties:
            a, b = root(self.body_index(tie.body_a)), root(self.body_index(tie.body_b))
            parent[max(a, b)] = min(a, b)
        groups = {}
        for i in range(len(self.bodies)):
            groups.setdefault(root(i), []).append(i)
        return list(groups.values())

    def _tie_rows(self, members, offset):
        """Rows B (one per tied free coordinate pair) with B q_free = 0 over a group's free coordinates."""
        rows = []
        n = sum(self.bodies[b].f_idx.size for b in members)
        for tie in self.ties:
            ia, ib = self.body_index(tie.body_a), self.body_index(tie.body_b)
            if ia not in members:
                continue
            for na, nb in zip(tie.nodes_a, tie.nodes_b):
                for c in range(self.dim):
                    row = np.zeros(n)
                    for bi, node, s in ((ia, na, 1.0), (ib, nb, -1.0)):
                        body = self.bodies[bi]
                        if not 0 <= node < body.X.shape[0]:
                            raise ModelError(f"tie: node {node} outside body {body.name!r}")
                        k = int(body.node_dofs[node, c])
                        if k == -2 or k in body.prescribed:
                            raise ModelError(f"tie: node {node} of body {body.name!r} has a prescribed or "
                                             f"unavailable coordinate; tied coordinates must be free or fixed")
                        if k >= 0:
                            row[offset[bi] + int(np.searchsorted(body.f_idx, k))] += s
                    if np.any(row):
                        rows.append(row)
        return np.array(rows) if rows else np.zeros((0, n))

    def _assemble_groups(self):
        self.groups = self._groups()
        nb = len(self.bodies)
        self.cols, self.T_body = [None] * nb, [None] * nb
        #: with a modal cut-off that dropped modes: every body's map from its group's full modal
        #: coordinates, and their squared frequencies (for the exact quasi-static motion)
        self._full = None
        w2s, Cms, start = [], [], 0
        for members in self.groups:
            offset, n = {}, 0
            for b in members:
                offset[b], n = n, n + self.bodies[b].f_idx.size
            M, K, C = (sla.block_diag(*[getattr(self.bodies[b], a)[np.ix_(self.bodies[b].f_idx, self.bodies[b].f_idx)]
                                        for b in members]) for a in ("M", "K", "C"))
            B = self._tie_rows(members, offset)
            L = sla.null_space(B) if B.shape[0] else np.eye(n)
            Mc, Kc = L.T @ M @ L, L.T @ K @ L
            names = [self.bodies[b].name for b in members]
            if n and np.linalg.eigvalsh(Mc).min() <= 1e-12 * np.abs(Mc).max():
                raise ModelError(f"the mass matrix of bodies {names} is not positive definite over "
                                 f"their free coordinates (a coordinate without mass, or a negative one)")
            if n:
                w2, phi = sla.eigh(Kc, Mc)
                w2 = check_definite(names, Mc, Kc, w2)
                if self.modal_cutoff_hz is not None:
                    keep = np.sqrt(w2) <= 2 * np.pi * self.modal_cutoff_hz
                    if not keep.all():
                        self._full = self._full or {}
                        Tf = L @ phi
                        for b in members:
                            self._full[b] = (Tf[offset[b]:offset[b] + self.bodies[b].f_idx.size], w2)
                    w2, phi = w2[keep], phi[:, keep]
            else:
                w2, phi = np.zeros(0), np.zeros((0, 0))
            T = L @ phi
            k = T.shape[1]
            for b in members:
                self.cols[b] = slice(start, start + k)
                self.T_body[b] = np.ascontiguousarray(T[offset[b]:offset[b] + self.bodies[b].f_idx.size])
            w2s.append(w2)
            Cms.append(T.T @ C @ T)
            start += k
        self.n_modes = start
        self.omega2 = np.concatenate(w2s) if w2s else np.zeros(0)
        self.group_of = [0] * nb
        for g, members in enumerate(self.groups):
            for b in members:
                self.group_of[b] = g
        self.Cm = sla.block_diag(*Cms) if Cms else np.zeros((0, 0))
        off = self.Cm - np.diag(np.diag(self.Cm))
        #: True when the modal damping is diagonal (Rayleigh-like): the step then skips a product
        self.damping_diagonal = not np.any(np.abs(off) > 1e-12 * max(np.abs(self.Cm).max(initial=0.0), 1e-300))
        self._quasi_static()

    def _quasi_static(self):
        """The quasi-static motion of the free coordinates under the prescribed ones.

        Body b's prescribed displacements ``u_b`` hold its free coordinates, at equilibrium, at
        ``T xi`` with ``xi = sum_b Xi[b] u_b`` over the modal coordinates of the group:
        ``Xi[b] = -Omega^-2 T_b' K_fp`` on the elastic modes, 0 on the rigid ones (the prescribed
        coordinates exert no force on a rigid mode of the free ones). For a rigid drag ``T xi`` is
        the body's rigid motion. The modal coordinates marched are the motion relative to it,
        ``eta = T^+ q_free - xi``: the deformation (and the rigid motions the drives leave free),
        not the distance dragged; :meth:`static_strain` gives the strain energy of the
        quasi-static motion itself (0 for a rigid drag)."""
        nb = len(self.bodies)
        self.Xi = [None] * nb
        self.drivers = [[] for _ in self.groups]   # per group: bodies with prescribed coordinates
        for b, body in enumerate(self.bodies):
            if not body.p_idx.size:
                continue
            g = self.group_of[b]
            self.drivers[g].append(b)
            if not body.f_idx.size:
                continue
            cols = self.cols[b]
            w2 = self.omega2[cols]
            Gk = self.T_body[b].T @ body.K[np.ix_(body.f_idx, body.p_idx)]
            inv = np.divide(1.0, w2, out=np.zeros_like(w2), where=w2 > 0)
            self.Xi[b] = -inv[:, None] * Gk
        # with dropped modes, T xi is the quasi-static motion truncated to the kept modes (for a
        # rigid drag, not the rigid motion): the displacements use the motion of all the modes,
        # S[b][d] (free coordinates of b per prescribed coordinate of d); the kept modes' share
        # of it is still Xi (the forcing of the marched coordinates is unchanged)
        self.S_free = None
        if self._full is not None:
            self.S_free = [dict() for _ in self.bodies]
            for g, ds in enumerate(self.drivers):
                for d in ds:
                    body = self.bodies[d]
                    if not body.f_idx.size or d not in self._full:
                        continue
                    Td, w2f = self._full[d]
                    inv = np.divide(1.0, w2f, out=np.zeros_like(w2f), where=w2f > 0)
                    xi_full = -inv[:, None] * (Td.T @ body.K[np.ix_(body.f_idx, body.p_idx)])
                    for b in self.groups[g]:
                        self.S_free[b][d] = self._full[b][0] @ xi_full

    def static_rows(self, b: int, d: int, rows=None, select=None) -> np.ndarray | None:
        """Displacements of body ``b``'s free coordinates in the quasi-static motion per unit
        prescribed displacement of body ``d`` (None when ``d`` drives nothing free): ``rows @
        Xi[d]`` for modal rows ``rows`` (default ``T_body[b]``) of the coordinates ``select``
        (indices among ``b``'s free coordinates), or, with dropped modes, the motion of all
        the modes at those coordinates."""
        if self.Xi[d] is None:
            return None
        if self.S_free is not None and d in self.S_free[b]:
            S = self.S_free[b][d]
            return S if select is None else S[select]
        return (self.T_body[b] if rows is None else rows) @ self.Xi[d]

    def quasi_static(self, g: int, ups) -> np.ndarray:
        """Modal coordinates ``xi`` (m per unit modal mass) of group ``g``'s quasi-static motion
        under the prescribed displacements (or velocities, accelerations: it is linear)
        ``ups[b]`` of every body b (arrays over ``p_idx``; ``(times, p)`` arrays give
        ``(times, n_group)``)."""
        out = None
        for b in self.drivers[g]:
            if self.Xi[b] is not None:
                x = np.asarray(ups[b]) @ self.Xi[b].T
                out = x if out is None else out + x
        return out

    def static_strain(self, ups):
        """Strain energy (J) of the quasi-static motion under the prescribed displacements
        ``ups[b]`` of every body (arrays over ``p_idx``; ``(times, p)`` arrays give one value per
        time), summed over the bodies: ``q' K q / 2`` of each body's coordinates in that motion.
        0 for rigid drags, to round-off squared (``K q`` is formed from the motion itself)."""
        total = 0.0
        for g, ds in enumerate(self.drivers):
            if not ds:
                continue
            xi = self.quasi_static(g, ups)
            shape = np.asarray(ups[ds[0]]).shape[:-1]
            for b in self.groups[g]:
                body = self.bodies[b]
                q = np.zeros(shape + (body.n,))
                if self.S_free is not None and body.f_idx.size:
                    for d in ds:
                        Sd = self.static_rows(b, d)
                        if Sd is not None:
                            q[..., body.f_idx] += np.asarray(ups[d]) @ Sd.T
                elif xi is not None and body.f_idx.size:
                    q[..., body.f_idx] = xi @ self.T_body[b].T
                if body.p_idx.size:
                    q[..., body.p_idx] = ups[b]
                total = total + 0.5 * np.einsum("...i,...i->...", q @ body.K, q)
        return total

    def _prepare_interfaces(self):
        self.contacts = []
        for itf in self.interfaces:
            if self.dim == 3:
                self.contacts.append(prepare_surface(self, itf, len(self.contacts)))
                continue
            s, m = self.body_index(itf.slave_body), self.body_index(itf.master_body)
            mnodes = itf.master_nodes
            loc = {int(v): i for i, v in enumerate(mnodes)}
            segs = np.array([[loc[int(a)], loc[int(b)]] for a, b in itf.master_segments], dtype=np.int64)
            slave, master = NodeRows(self, s, itf.slave_nodes), NodeRows(self, m, mnodes)
            self.contacts.append({"interface": itf, "slave_body": s, "master_body": m, "slave": slave,
                                  "master": master, "segments": segs, "surface": SegmentSet(master.X, segs),
                                  "mu": itf.mu, "geometry": itf.geometry, "node_laws": itf.laws,
                                  "law_code": itf.law_code, "law_params": itf.law_params,
                                  "law_user": itf.law_user})
            check_interface(self, self.contacts[-1], len(self.contacts) - 1)

    # ------------------------------------------------------------------ dynamics helpers
    def critical_step(self) -> float:
        """Central-difference stability limit (s): min over modes of (2/w)(sqrt(1 + z^2) - z),
        z = C_kk / (2 w) the modal damping ratio (exact for diagonal modal damping)."""
        w = np.sqrt(self.omega2)
        ok = w > 0
        if not np.any(ok):
            return np.inf
        z = np.diag(self.Cm)[ok] / (2 * w[ok])
        return float(np.min(2.0 / w[ok] * (np.sqrt(1 + z * z) - z)))

    def _prepare_forces(self):
        """Constant modal loads, the bodies with time-dependent loads and the modal coupling
        matrices of the prescribed coordinates on the relative coordinates ``eta`` (see
        :meth:`_quasi_static`): stiffness ``T_b' K_fp`` on the rigid modes only (it is balanced by
        the quasi-static motion on the elastic ones), damping ``T_b' C_fp + C_m Xi_b``, mass
        ``T_b' M_fp + Xi_b`` (the inertia of the quasi-static motion)."""
        self._f0 = np.zeros(self.n_modes)
        self._f_t, self._f_p = [], []
        for b, body in enumerate(self.bodies):
            T, cols = self.T_body[b], self.cols[b]
            if callable(body.loads):
                self._f_t.append((b, body, T, cols))
            elif body.loads is not None:
                with np.errstate(over="ignore", invalid="ignore"):
                    self._f0[cols] += T.T @ body.loads[body.f_idx]
                check_modal_forces(self._f0)
            if body.p_idx.size and body.f_idx.size:
                fi, pi = body.f_idx, body.p_idx
                G = [T.T @ getattr(body, a)[np.ix_(fi, pi)] for a in ("K", "C", "M")]
                G[0][self.omega2[cols] > 0] = 0.0
                G[1] += self.Cm[cols, cols] @ self.Xi[b]
                G[2] += self.Xi[b]
                if any(np.any(g) for g in G):
                    self._f_p.append((body, cols, *G))

    def modal_force(self, t: float) -> np.ndarray:
        """Modal forces (N, per unit modal mass) at time ``t`` on the relative coordinates: the
        loads and the coupling forces ``-(Gk u_p + Gc v_p + Gm a_p)`` of the prescribed
        coordinates (see :meth:`_prepare_forces`)."""
        if not (self._f_t or self._f_p):  # constant loads only (checked when prepared)
            return self._f0.copy()
        return self.modal_forces([self.force_inputs(t)])[0]

    def force_inputs(self, t: float, motion=None):
        """What :meth:`modal_forces` needs at time ``t`` (s): the load (N) of each body with
        time-dependent loads and the motion (u, v, a) of each body whose prescribed coordinates
        drive free ones, ``motion(body)`` when given (the motion at ``t`` already sampled), else
        ``body.motion(t)``."""
        motion = motion or (lambda body: body.motion(t))
        return [body.load(t) for _, body, _, _ in self._f_t], [motion(body) for body, *_ in self._f_p]

    def modal_forces(self, inputs) -> np.ndarray:
        """(len(inputs), n_modes) modal forces (N, per unit modal mass) from the
        :meth:`force_inputs` of as many times: projected for all the times at once (one matrix
        product per body instead of one per time)."""
        F = np.tile(self._f0, (len(inputs), 1))
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
            for i, (_, body, T, cols) in enumerate(self._f_t):
                F[:, cols] += np.array([x[0][i] for x in inputs])[:, body.f_idx] @ T
            for i, (_, cols, Gk, Gc, Gm) in enumerate(self._f_p):
                U = np.array([x[1][i] for x in inputs])  # (times, 3, prescribed coordinates)
                F[:, cols] -= U[:, 0] @ Gk.T + U[:, 1] @ Gc.T + U[:, 2] @ Gm.T
        check_modal_forces(F)
        return F

    def modal_state(self, initial=None):
        """(eta, eta velocity) from ``initial`` = {body: (u, v)} over the body's coordinates (m,
        m/s; prescribed entries ignored; tied bodies must agree), zero for bodies not given."""
        eta, deta = np.zeros(self.n_modes), np.zeros(self.n_modes)
        if initial is None:
            initial = {}
        if not isinstance(initial, Mapping):
            raise ParameterError(f"initial must be a dict {{body name or index: (u, v)}} of displacements (m) "
                                 f"and velocities (m/s) over a body's coordinates, got {type(initial).__name__}")
        for key, state in initial.items():
            try:
                u, v = state
            except (TypeError, ValueError):
                raise ParameterError(f"initial[{key!r}] must be a pair (u, v) of a body's displacements (m) "
                                     f"and velocities (m/s)") from None
            b = self.body_index(key)
            body = self.bodies[b]
            try:
                u, v = (np.asarray(x, dtype=float) for x in (u, v))
            except (TypeError, ValueError):
                u = v = np.zeros(0)  # refused just below, with the shape asked for
            if u.shape != (body.n,) or v.shape != (body.n,) or not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
                raise ParameterError(f"initial state of body {body.name!r} must be two finite ({body.n},) "
                                     f"arrays (m, m/s)")
            Mf = body.M[np.ix_(body.f_idx, body.f_idx)]
            eta[self.cols[b]] += self.T_body[b].T @ Mf @ u[body.f_idx]
            deta[self.cols[b]] += self.T_body[b].T @ Mf @ v[body.f_idx]
        # relative to the quasi-static motion of the drives at t = 0
        uva = [b.motion(0.0) if b.p_idx.size else np.zeros((3, 0)) for b in self.bodies]
        for g, members in enumerate(self.groups):
            cols = self.cols[members[0]]
            for k, x in ((0, eta), (1, deta)):
                xi = self.quasi_static(g, [m[k] for m in uva])
                if xi is not None:
                    x[cols] -= xi
        return eta, deta

    def coordinates(self, b: int, eta, t: float) -> np.ndarray:
        """Body ``b``'s coordinates (m) from the (relative) modal coordinates and the prescribed
        motions at t."""
        body = self.bodies[b]
        q = np.zeros(body.n)
        e = np.array(eta[self.cols[b]], dtype=float)
        ups = [x.motion(t)[0] if x.p_idx.size else np.zeros(0) for x in self.bodies]
        g = self.group_of[b]
        xi = None if self.S_free is not None else self.quasi_static(g, ups)
        if xi is not None:
            e += xi
        q[body.f_idx] = self.T_body[b] @ e
        if self.S_free is not None:
            for d in self.drivers[g]:
                Sd = self.static_rows(b, d)
                if Sd is not None:
                    q[body.f_idx] += Sd @ ups[d]
        if body.p_idx.size:
            q[body.p_idx] = body.motion(t)[0]
        return q
