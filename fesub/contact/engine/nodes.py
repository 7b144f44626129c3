"""Node displacements of a body over the stacked modal coordinates of a multibody model.

:class:`NodeRows` gives, for chosen nodes of one body, the rows that map the model's modal
coordinates to their (x, y) displacements ((x, y, z) on solid bodies) and the parts that the drives' quasi-static motion adds
(:meth:`fesub.contact.engine.bodies.MultibodyModel.static_rows`): what the contact search, the
contact rows and the kernel's node arrays are built from.

Units: SI (m).
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError

__all__ = ["NodeRows"]


class NodeRows:
    """Displacement of chosen nodes of one body over the stacked modal coordinates.

    ``u(node) = R[node] @ eta[cols] + sum_d P_d[node] @ u_d`` with R (k, d, n_group) the modal
    rows of the node components that are free and, for every body d of the group with
    prescribed coordinates (``drivers``, the body itself or a body tied to it), P_d (k, d, p_d)
    the node's part of their quasi-static motion: the selection of its own prescribed
    components plus ``R Xi_d`` for its free ones (see :meth:`MultibodyModel._quasi_static`)."""

    def __init__(self, model, b: int, nodes):
        body = model.bodies[b]
        nodes = np.asarray(nodes, dtype=np.int64)
        if nodes.min() < 0 or nodes.max() >= body.X.shape[0]:
            raise ModelError(f"body {body.name!r}: node index outside 0..{body.X.shape[0] - 1}")
        nd = body.node_dofs[nodes]
        #: displacement components per node (2 plane, 3 solid)
        self.dim = dim = body.dim
        if np.any(nd == -2):
            bad = nodes[np.any(nd == -2, axis=1)][:5]
            where = "; ".join(f"node {int(i)} at ({', '.join(f'{x:.6g}' for x in body.X[i])}) m" for i in bad)
            comps = "x, y and z" if dim == 3 else "x and y"
            raise ModelError(f"body {body.name!r}: nodes without an x/y{'/z' * (dim == 3)} coordinate in the model "
                             f"({where}): interior DOFs of a reduced model cannot be in an interface; keep the "
                             f"{comps} DOFs of these nodes as boundary DOFs of the Craig-Bampton reduction")
        self.nodes, self.X = nodes, body.X[nodes]
        self.cols = model.cols[b]
        Tb = model.T_body[b]  # (n_free_b, n_group)
        fpos = {int(k): i for i, k in enumerate(body.f_idx)}
        ppos = {int(k): i for i, k in enumerate(body.p_idx)}
        self.R = np.zeros((nodes.size, dim, Tb.shape[1]))
        P = np.zeros((nodes.size, dim, body.p_idx.size))
        for i in range(nodes.size):
            for c in range(dim):
                k = int(nd[i, c])
                if k in fpos:
                    self.R[i, c] = Tb[fpos[k]]
                elif k in ppos:
                    P[i, c, ppos[k]] = 1.0
        # the same rows as one (2k, n) matrix each: one matrix-vector product per call
        self._R2 = self.R.reshape(dim * nodes.size, -1)
        #: (body d, (dim k, p_d) matrix) of every body whose prescribed motion moves these nodes
        self.drivers = []
        sel = np.array([fpos.get(int(k), 0) for k in nd.ravel()], np.int64)  # free index per row
        free_row = np.array([int(k) in fpos for k in nd.ravel()])
        for d in model.drivers[model.group_of[b]]:
            P2 = P.reshape(dim * nodes.size, -1).copy() if d == b else np.zeros((dim * nodes.size,
                                                                                  model.bodies[d].p_idx.size))
            Sd = model.static_rows(b, d, self._R2, sel)
            if Sd is not None:
                P2 += np.where(free_row[:, None], Sd, 0.0)
            self.drivers.append((d, P2))

    def free(self, eta) -> np.ndarray:
        """(k, dim) displacement (m) from the modal coordinates; (s, k, dim) from s states of them
        (an (s, n_modes) array: one pass over the rows for all)."""
        if eta.ndim == 2:
            return (eta[:, self.cols] @ self._R2.T).reshape(eta.shape[0], -1, self.dim)
        return (self._R2 @ eta[self.cols]).reshape(-1, self.dim)

    def driven(self, ups) -> np.ndarray:
        """(k, dim) displacement (m) of the quasi-static motion from the prescribed displacements
        ``ups[d]`` of every body d (over its ``p_idx``); (times, k, dim) from arrays of shape (times,
        prescribed coordinates), in one matrix product per driving body. Linear: velocities
        give velocities."""
        out = None
        for d, P2 in self.drivers:
            up = np.asarray(ups[d])
            x = up @ P2.T if up.ndim == 2 else P2 @ up
            out = x if out is None else out + x
        if out is None:
            shape = (np.asarray(ups[0]).shape[0],) if ups and np.asarray(ups[0]).ndim == 2 else ()
            return np.zeros(shape + (self.nodes.size, self.dim))
        return out.reshape(out.shape[:-1] + (-1, self.dim))
