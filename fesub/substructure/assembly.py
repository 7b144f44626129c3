"""Assembly of any number of substructures through tied interfaces, dual and primal.

Each substructure ``s`` is a linear model ``M_s u_s'' + K_s u_s = f_s`` over its own coordinates:
a whole :class:`~fesub.substructure.Substructure` (its retained DOFs), a
:class:`~fesub.substructure.CraigBampton` model (``q = [eta; u_b]``) or plain matrices (any object
with ``M``, ``K``, node positions ``X`` and the map ``node_dofs`` node -> coordinate, such as a
:class:`fesub.contact.Body`). An :class:`Interface` ties node sets of two of them:

* ``method="matching"``: nodes paired by coordinates, ``u_a(node) - u_b(partner) = 0`` (signed
  Boolean rows), in the plane or in space (3D solid substructures, components x, y, z);
* ``method="surface"`` (node-to-surface, non-matching meshes): each node of side a is held on
  the nearest edge of side b's surface, ``u_a(node) = sum_k N_k(xi) u_b(n_k)`` with the shape
  functions of the edge (linear on Q4/T3 edges, quadratic on Q8/Q9/T6 edges);
* ``method="mortar"`` (non-matching meshes): the jump held to zero weakly against side a's edge
  shape functions, ``D u_a - M u_b = 0`` (:func:`~fesub.substructure.ties.mortar_rows`).

Node-to-surface and mortar ties work on the edges of plane meshes; 3D substructures are tied by
matching nodes (a conforming mesh cut along faces, :func:`~fesub.substructure.read_volumes`).

Node-to-surface rows reproduce linear fields at the slave nodes only; the traction they pass is
not consistent, and their own error converges at first order in the mesh size (visible once the
elements are accurate: quadratic elements, or a cut at a stress maximum). The mortar rows keep the
elements' order (2 for Q4, 4 for Q8 in the tests).

:class:`SubstructureAssembly` stacks the coordinates ``u = [u_1; ...; u_N]`` and gives the dual
form (block-diagonal ``M``, ``K`` and the constraint rows ``B``, ``B u = 0``) and the primal form
``u = L v`` with ``L`` a sparse basis of the null space of ``B`` (a Boolean localisation for
matching nodes; slave coordinates interpolated for surface and mortar ties): ``L' M L``, ``L' K L``. Its
coupled modes (:class:`~fesub.substructure.CoupledModes`) come from either form, and the primal
system is exported as a :class:`fesub.contact.Body` for the contact stepper.

Units: SI (m, kg, N, s; frequencies in Hz).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ModelError, ParameterError, check_count, check_positive
from ..fe.assembly import dense_modes, modes
from ..fe.loads import boundary_faces
from .coupled_modes import CoupledModes
from .parts import Part, default_name
from .ties import constraint_null_space, match_nodes, mortar_rows, surface_weights

__all__ = ["Interface", "SubstructureAssembly"]

_METHODS = ("matching", "surface", "mortar")


class Interface:
    """A tie between node sets of two substructures of an assembly.

    Parameters
    ----------
    a, b : str or int
        The two substructures, by name or position in the assembly. For ``method="surface"``
        ``a`` carries the slave nodes and ``b`` the master surface.
    nodes_a : str or int array
        Node set of ``a``: the name of a mesh node (or edge) set, or node indices.
    nodes_b : str or int array, optional
        Node set of ``b`` (default: the set of the same name as ``nodes_a``).
    method : {"matching", "surface", "mortar"}
        ``"matching"``: nodes paired by coordinates, in 2D or 3D (every node needs a partner
        within ``tol``);
        ``"surface"``: each node of ``a`` interpolated on the edges of ``b``'s set (plane meshes,
        linear or quadratic edges); ``"mortar"``: the displacement jump held to zero weakly
        against ``a``'s edge shape functions (plane meshes on both sides; keeps the elements'
        order of convergence).
    tol : float, optional
        Largest distance (m) between paired nodes, or between a slave node (a mortar
        integration point) and the master surface. Default: 1e-6 times the largest extent of the two substructures.
    comps : sequence of str, optional
        Tied components (``"x"``, ``"y"``, ``"rz"``; ``"x"``, ``"y"``, ``"z"`` in 3D); default all the
        components the two sides share (``x``, ``y`` for surface and mortar ties).
    name : str, optional
        Label used in messages.
    """

    def __init__(self, a, nodes_a, b, nodes_b=None, *, method: str = "matching", tol: float | None = None,
                 comps=None, name: str | None = None):
        if method not in _METHODS:
            raise ParameterError(f"method must be one of {_METHODS}, got {method!r}")
        self.a, self.b = a, b
        self.nodes_a = nodes_a
        self.nodes_b = nodes_a if nodes_b is None else nodes_b
        self.method = method
        self.tol = None if tol is None else check_positive("tol (m)", tol)
        self.comps = None if comps is None else ((comps,) if isinstance(comps, str) else tuple(comps))
        self.name = name or f"{a}:{nodes_a if isinstance(nodes_a, str) else 'nodes'}-{b}"

    def __repr__(self) -> str:
        return f"Interface({self.name!r}, {self.method})"


class SubstructureAssembly:
    """Any number of substructures tied through interfaces: dual and primal assembled models.

    Parameters
    ----------
    substructures : sequence or dict
        :class:`~fesub.substructure.Substructure`, :class:`~fesub.substructure.CraigBampton` (built
        from a Substructure) or matrix models: any object with ``M`` (kg), ``K`` (N/m), optional
        ``C`` (N s/m), node positions ``X`` (m), ``node_dofs`` (N, 2 or 3) node component ->
        coordinate (-1 fixed, -2 not available) and optional ``node_sets`` (name -> node indices),
        such as a :class:`fesub.contact.Body` or a :class:`types.SimpleNamespace` (a Body's
        prescribed motions and loads are not used). In a sequence (named by their ``name``) or
        a dict name -> model.
    interfaces : sequence of :class:`Interface`
        The ties (distances in m). Substructures are all plane (2D) or all solid (3D: solid
        meshes, or matrix models with components x, y, z); 3D substructures are tied by
        matching nodes.
    redundant : {"error", "drop"}
        A tie row implied by the others (a node shared by several substructures tied around a
        loop, a tie given twice) makes the constraints rank-deficient: refuse it (default), or
        leave it out of ``B`` (meant for exact repeats, such as the cross-points of matching
        ties; a row that is only nearly dependent is kept and conditions ``L`` badly).

    Attributes
    ----------
    names : list of str
        Substructure names, in assembly order.
    dim : int
        Space dimension of the substructures (-): 2 or 3.
    offsets : (N + 1,) int array
        ``u[offsets[s]:offsets[s + 1]]`` are the coordinates of substructure s.
    B : (m, n) CSR
        Constraint rows ``B u = 0`` (dimensionless), one per tied node and component.
    row_labels : list of str
        What each row ties (interface, node, component).
    """

    def __init__(self, substructures, interfaces=(), *, redundant: str = "error"):
        items = list(substructures.items()) if isinstance(substructures, dict) else \
            [(default_name(o, i), o) for i, o in enumerate(substructures)]
        if not items:
            raise ParameterError("substructures must hold at least one model")
        self.names = [str(k) for k, _ in items]
        if len(set(self.names)) != len(self.names):
            raise ParameterError(f"substructure names must differ, got {self.names} (pass a dict name -> model)")
        self.parts = [Part(o, k) for k, o in items]
        dims = sorted({p.dim for p in self.parts})
        if len(dims) > 1:
            raise ModelError(f"substructures must all be plane or all 3D; got "
                             f"{[(p.name, f'{p.dim}D') for p in self.parts]}")
        self.dim = dims[0]
        self.offsets = np.concatenate([[0], np.cumsum([p.n for p in self.parts])]).astype(np.int64)
        self.interfaces = list(interfaces)
        if not all(isinstance(i, Interface) for i in self.interfaces):
            raise ParameterError("interfaces must be Interface objects")
        rows, cols, vals, self.row_labels, prefer_rows = [], [], [], [], []
        for itf in self.interfaces:
            for entries, prefer, label in self._rows(itf):
                r = len(self.row_labels)
                for c, v in entries:
                    rows.append(r), cols.append(c), vals.append(v)
                self.row_labels.append(label)
                prefer_rows.append(prefer)
        B = sp.csr_matrix((vals, (rows, cols)), shape=(len(self.row_labels), self.n_dofs))
        B.sum_duplicates()
        # the null space now: a redundant tie is refused (or left out) before anything is solved
        self._L, _, kept = constraint_null_space(B, prefer=np.array(prefer_rows, np.int64), labels=self.row_labels,
                                                 redundant=redundant)
        self.B = B[kept]
        self.row_labels = [self.row_labels[i] for i in kept]
        self._pmap = None

    # ------------------------------------------------------------------ structure
    @property
    def n_dofs(self) -> int:
        """Number of stacked coordinates of all substructures (the dual size without multipliers)."""
        return int(self.offsets[-1])

    def index(self, key) -> int:
        """Position of a substructure given by name or position."""
        if isinstance(key, numbers.Integral) and 0 <= key < len(self.parts):
            return int(key)
        if key in self.names:
            return self.names.index(key)
        raise ModelError(f"no substructure {key!r}; the assembly has {self.names}")

    def _rows(self, itf):
        """(entries [(global coordinate, coefficient)], preferred coordinate, label) per tie row."""
        ia, ib = self.index(itf.a), self.index(itf.b)
        pa, pb = self.parts[ia], self.parts[ib]
        na, nb = pa.nodes(itf.nodes_a, itf), pb.nodes(itf.nodes_b, itf)
        tol = itf.tol or 1e-6 * max(np.ptp(np.vstack([pa.X, pb.X]), axis=0).max(), 1e-300)
        if itf.method == "matching":
            comps = itf.comps or tuple(c for c in pa.comps if c in pb.comps)
            partner = nb[match_nodes(pa.X[na], pb.X[nb], tol=tol, what=f"interface {itf.name!r}", ids=(na, nb),
                                     sides=(repr(pa.name), repr(pb.name)))]
            masters, weights = partner[:, None], np.ones((na.size, 1))
        elif itf.method == "surface":
            comps = itf.comps or ("x", "y")
            faces = self._faces(pb, nb, itf)
            masters, weights = surface_weights(pa.X[na], pb.X, faces, tol=tol, what=f"interface {itf.name!r}")
        else:
            comps = itf.comps or ("x", "y")
            slave, D, Mm = mortar_rows(pa.X, self._faces(pa, na, itf), pb.X, self._faces(pb, nb, itf), tol=tol,
                                       what=f"interface {itf.name!r}")
            return self._weak_rows(itf, ia, ib, slave, D, Mm, comps)
        ca = pa.coords(na, comps, itf)
        ca = np.where(ca >= 0, ca + self.offsets[ia], -1)
        out = []
        for k in range(na.size):
            used = (masters[k] >= 0) & (weights[k] != 0.0)
            mk, wk = masters[k][used], weights[k][used]
            cb = pb.coords(mk, comps, itf)
            for j, comp in enumerate(comps):
                entries = [(int(ca[k, j]), 1.0)] if ca[k, j] >= 0 else []
                entries += [(int(self.offsets[ib] + cb[m, j]), -float(w)) for m, w in enumerate(wk) if cb[m, j] >= 0]
                if entries:
                    label = f"interface {itf.name!r}, node {int(na[k])} of {pa.name!r}, component {comp}"
                    out.append((entries, entries[0][0] if ca[k, j] >= 0 else -1, label))
        return out

    @staticmethod
    def _faces(part, nodes, itf):
        """Boundary edges of a part's mesh whose two corners are in ``nodes``: width -> (m, width)."""
        if part.dim == 3:
            raise ModelError(f"interface {itf.name!r}: {itf.method} ties are for plane meshes; tie the 3D "
                             f"substructure {part.name!r} with method='matching' (nodes that coincide)")
        if part.mesh is None or part.mesh.element_type == "line":
            raise ModelError(f"interface {itf.name!r}: a {itf.method} tie needs a plane mesh on {part.name!r}")
        inside = np.zeros(part.X.shape[0], bool)
        inside[nodes] = True
        faces = {w: f[inside[f[:, :2]].all(axis=1)] for w, f in boundary_faces(part.mesh).items()}
        if not any(len(f) for f in faces.values()):
            raise ModelError(f"interface {itf.name!r}: the node set of {part.name!r} holds no boundary edge "
                             f"of its elements")
        return faces

    def _weak_rows(self, itf, ia, ib, slave, D, Mm, comps):
        """Rows ``D u_a - M u_b = 0`` of a mortar tie, one per slave node and component."""
        pa, pb = self.parts[ia], self.parts[ib]
        out = []
        for k, node in enumerate(slave):
            ds, dv = D.indices[D.indptr[k]:D.indptr[k + 1]], D.data[D.indptr[k]:D.indptr[k + 1]]
            ms, mv = Mm.indices[Mm.indptr[k]:Mm.indptr[k + 1]], Mm.data[Mm.indptr[k]:Mm.indptr[k + 1]]
            ca, cb = pa.coords(ds, comps, itf), pb.coords(ms, comps, itf)
            own = pa.coords(np.array([node]), comps, itf)[0]
            for j, comp in enumerate(comps):
                entries = [(int(self.offsets[ia] + c), float(v)) for c, v in zip(ca[:, j], dv) if c >= 0]
                entries += [(int(self.offsets[ib] + c), -float(v)) for c, v in zip(cb[:, j], mv) if c >= 0]
                if entries:
                    label = f"interface {itf.name!r}, node {int(node)} of {pa.name!r}, component {comp}"
                    out.append((entries, int(self.offsets[ia] + own[j]) if own[j] >= 0 else -1, label))
        return out

    # ------------------------------------------------------------------ dual and primal forms
    def _blocks(self, attr):
        return sp.block_diag([getattr(p, attr) for p in self.parts], format="csr")

    def dual(self):
        """Dual form: block-diagonal mass (kg) and stiffness (N/m), and the constraint rows.

        Returns
        -------
        M, K : (n, n) CSR
            Stacked substructure matrices.
        B : (m, n) CSR
            Signed Boolean (matching) or interpolation (surface) rows, ``B u = 0``.
        """
        return self._blocks("M"), self._blocks("K"), self.B

    @property
    def L(self) -> sp.csr_matrix:
        """(n, n_primal) sparse null-space basis of ``B``: ``u = L v`` (Boolean for matching ties)."""
        return self._L

    def primal(self):
        """Primal form ``u = L v``.

        Returns
        -------
        L : (n, n_primal) CSR
            Null-space basis of the constraint rows (dimensionless).
        M, K, C : (n_primal, n_primal) CSR
            ``L' M L`` (kg), ``L' K L`` (N/m) and ``L' C L`` (N s/m).
        """
        L = self.L
        LT = L.T.tocsr()
        return (L,) + tuple(sp.csr_matrix(LT @ self._blocks(a) @ L) for a in ("M", "K", "C"))

    def split(self, u) -> list:
        """Stacked coordinates ``u`` (n[, k]) cut into the coordinates of each substructure."""
        u = np.asarray(u)
        if u.shape[0] != self.n_dofs:
            raise ModelError(f"stacked vector has {u.shape[0]} rows, expected {self.n_dofs}")
        return [u[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:])]

    # ------------------------------------------------------------------ coupled modes
    def modes(self, n: int, *, method: str = "primal") -> CoupledModes:
        """Lowest ``n`` undamped modes of the assembled system.

        Parameters
        ----------
        n : int
            Number of modes (-), 1..number of primal coordinates.
        method : {"primal", "dual"}
            ``"primal"``: eigenproblem of ``(L' K L, L' M L)``; ``"dual"``: the saddle-point problem
            ``[[K, B'], [B, 0]] x = w^2 [[M, 0], [0, 0]] x`` (Lagrange multipliers, no null space).

        Returns
        -------
        CoupledModes
            Frequencies (Hz) and mass-normalised shapes on each substructure's nodes.
        """
        if method not in ("primal", "dual"):
            raise ParameterError(f"method must be 'primal' or 'dual', got {method!r}")
        n = check_count("n", n, 1, self.n_dofs - self.B.shape[0], error=ModelError)
        if method == "primal":
            L, Mp, Kp, _ = self.primal()
            f, v = modes(Kp, Mp, n)
            u = L @ v
        else:
            f, u = self._dual_modes(n)
        fields = [p.recover(q) for p, q in zip(self.parts, self.split(u))]
        return CoupledModes(f, self.names, [p.X for p in self.parts], [p.comps for p in self.parts],
                            [np.moveaxis(s, -1, 0) for s in fields], method=method,
                            n_dofs=self.n_dofs, n_constraints=self.B.shape[0],
                            kinds=[p.kind for p in self.parts])

    def _dual_modes(self, n):
        M, K, B = self.dual()
        m, size = B.shape[0], self.n_dofs
        # shift-invert about sigma < 0 (rigid-body modes are found too): R = u-block of the inverse
        # of the saddle-point matrix [[K - sigma M, B'], [B, 0]], symmetric, R M u = u / (lam - sigma)
        # (constraint rows scaled to the stiffness: the same null space, a well-scaled pivoting)
        kd = np.abs(K.diagonal()).mean()
        sigma = -1e-6 * kd / np.abs(M.diagonal()).mean()
        lu = spla.splu(sp.bmat([[K - sigma * M, kd * B.T], [kd * B, None]]).tocsc())
        if dense_modes(size, n):
            try:
                C = sla.cholesky(M.toarray(), lower=True)
            except sla.LinAlgError as exc:
                raise ModelError("the stacked mass matrix is not positive definite (a coordinate without "
                                 "mass?); use method='primal'") from exc
            RC = lu.solve(np.vstack([C, np.zeros((m, size))]))[:size]
            S = C.T @ RC
            nu, y = sla.eigh(0.5 * (S + S.T), subset_by_index=[size - n, size - 1])
            lam, u = sigma + 1.0 / nu[::-1], RC @ y[:, ::-1]
        else:
            pad = np.zeros(m)
            op = spla.LinearOperator((size, size), matvec=lambda x: lu.solve(np.concatenate([x.ravel(), pad]))[:size])
            v0 = np.random.default_rng(0).standard_normal(size)
            lam, u = spla.eigsh(K, k=n, M=M, sigma=sigma, OPinv=op, which="LM", v0=v0)
            order = np.argsort(lam)
            lam, u = lam[order], u[:, order]
        u = u / np.sqrt(np.einsum("ij,ij->j", u, M @ u))
        return np.sqrt(np.clip(lam, 0.0, None)) / (2 * np.pi), u

    def plot_mode(self, modes: CoupledModes, mode: int, path, *, scale: float | None = None):
        """Draw one coupled mode on every meshed substructure, in place (PNG via the house style;
        3D substructures are rendered off screen by pyvista, :func:`fesub.plots.modes.render_modes`).

        Parameters
        ----------
        modes : CoupledModes
            Modes of this assembly (:meth:`modes`).
        mode : int
            Mode index (-), 0 the lowest.
        path : str or path-like
            PNG to write.
        scale : float, optional
            Deformation scale (-); default: the largest displacement drawn as 10 % of the assembly.

        Returns
        -------
        path
            The file written (:func:`fesub.plots.modes.plot_coupled_modes`).
        """
        from ..plots.modes import plot_coupled_modes, render_modes

        if modes.names != self.names:
            raise ModelError(f"modes of {modes.names} do not belong to this assembly of {self.names}")
        pairs = [(p.mesh, modes.shape(s, mode)) for s, p in enumerate(self.parts) if p.mesh is not None]
        labels = [p.name for p in self.parts if p.mesh is not None]
        if not pairs:
            raise ModelError("no substructure of the assembly has a mesh to draw")
        title = f"coupled mode {mode + 1}, {modes.freq_hz[mode]:.4g} Hz ({modes.method})"
        if self.dim == 3:
            return render_modes(pairs, path, scale=scale, title=title)
        return plot_coupled_modes(pairs, path, scale=scale, labels=labels, title=title)

    def frequencies(self, n: int, *, method: str = "primal") -> np.ndarray:
        """Lowest ``n`` natural frequencies (Hz) of the assembled system (see :meth:`modes`)."""
        return self.modes(n, method=method).freq_hz

    # ------------------------------------------------------------------ export
    def coordinate(self, part, node: int, comp: str) -> int:
        """Primal coordinate of a node component of a substructure (what :meth:`primal_nodes` numbers).

        Parameters
        ----------
        part : str or int
            Substructure name or position.
        node : int
            Node index in that substructure (-).
        comp : str
            Component (``"x"``, ``"y"``, ``"rz"``; ``"z"`` in 3D).

        Returns
        -------
        int
            Column of ``L``; -1 if the component is fixed, -2 if it is no single coordinate (an
            interior node of a reduced model, or a slave node interpolated on a surface).
        """
        p = self.parts[self.index(part)]
        if comp not in p.comps:
            raise ModelError(f"substructure {p.name!r} has no component {comp!r}; it has {p.comps}")
        if not isinstance(node, numbers.Integral) or not 0 <= node < p.X.shape[0]:
            raise ModelError(f"node must be an index in 0..{p.X.shape[0] - 1} of {p.name!r}, got {node!r}")
        k = int(p.node_dofs[node, p.comps.index(comp)])
        return k if k < 0 else int(self._primal_map()[self.offsets[self.index(part)] + k])

    def _primal_map(self) -> np.ndarray:
        """For each stacked coordinate: its primal coordinate, -1 if tied to zero, -2 if a combination."""
        if self._pmap is not None:
            return self._pmap
        L = self.L.tocsr()
        nnz = np.diff(L.indptr)
        out = np.full(L.shape[0], -2, np.int64)
        out[nnz == 0] = -1
        one = nnz == 1
        first = L.indptr[:-1][one]
        unit = np.abs(L.data[first] - 1.0) <= 1e-14
        out[np.flatnonzero(one)[unit]] = L.indices[first][unit]
        self._pmap = out
        return out

    def primal_nodes(self):
        """Node positions and their primal coordinates, every substructure's nodes in assembly order
        (node ``i`` of substructure ``s`` is row ``node_offsets()[s] + i``); tied nodes share their
        coordinates. :meth:`fesub.contact.Body.from_assembly` builds the contact stepper's body
        from these and :meth:`primal`.

        Returns
        -------
        X : (N, 2) array
            Reference node positions (m).
        node_dofs : (N, 2) int array
            Primal coordinate of the x and y displacement of each node; -1 fixed (clamped, or
            tied to zero), -2 not a single coordinate (an interior node of a reduced model, or a
            node whose motion is a combination of coordinates).
        """
        if self.dim == 3:
            raise ModelError("primal_nodes gives plane bodies for the contact stepper; this assembly is 3D")
        pmap = self._primal_map()
        X, nd = [], []
        for s, part in enumerate(self.parts):
            local = part.node_dofs[:, :2]
            nd.append(np.where(local >= 0, pmap[self.offsets[s] + np.maximum(local, 0)], local))
            X.append(part.X[:, :2])
        return np.vstack(X), np.vstack(nd)

    def node_offsets(self) -> np.ndarray:
        """(N + 1,) first body node of each substructure in :meth:`primal_nodes` (-)."""
        return np.concatenate([[0], np.cumsum([p.X.shape[0] for p in self.parts])]).astype(np.int64)

    def __repr__(self) -> str:
        return (f"SubstructureAssembly({len(self.parts)} substructures {self.names}, {len(self.interfaces)} "
                f"interfaces, {self.n_dofs} coordinates, {self.B.shape[0]} constraints)")
