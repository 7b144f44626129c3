"""Node-to-surface frictional contact between solid (3D) bodies: :class:`ContactInterface3D`.

Each slave node ``P`` of one solid body is projected, every step, on master faces of another
(tri3, quad4, tri6, quad8, quad9; :class:`~fesub.contact.geometry.FaceSet`) at their deformed
positions: the closest point ``x_c = sum_j N_j(r, s) x_j`` of the surface (Newton's method on
curved faces), the signed gap ``g = n . (P - x_c)`` (> 0 open) and the local frame (unit normal
``n`` pointing to the open side, tangents ``t1``, ``t2 = n x t1``). The node gives three rows:

    normal row:       n  . (dP - sum_j N_j dx_j)     (the change of the gap, m)
    tangential rows:  t1 . (dP - sum_j N_j dx_j),  t2 . (...)   (the slip of P on the master, m)

for displacement increments d(.). The multipliers are the forces of the master on the slave
(N): normal (> 0 in compression) and the tangential 2-vector ``(lambda_t1, lambda_t2)``; the
master receives the opposite forces, shared by the shape functions ``N_j`` among its face nodes.
Friction is isotropic in the tangent plane, ``|lambda_t| <= mu lambda_n``, with one friction law
per slave node (:mod:`~fesub.contact.engine.friction`); each step's frictional contact problem is
solved exactly on the cone by :mod:`~fesub.contact.engine.contacts3d`.

Units: SI (m, N).
"""

from __future__ import annotations


from ...errors import ParameterError
from ..geometry import FaceSet
from .checks import node_array
from .friction import law_arrays

__all__ = ["ContactInterface3D"]


class ContactInterface3D:
    """Node-to-surface frictional contact of slave nodes of a solid body on faces of another.

    Parameters
    ----------
    slave_body, master_body : int or str
        The bodies (index in the model, or name); both solid (node positions (N, 3)).
    slave_nodes : int sequence
        Nodes of the slave body in contact (each gives one normal and two tangential rows).
    master_faces : (m, k) int array, dict, SolidFaces or FaceSet
        The master faces by the master body's node numbers: an (m, k) connectivity with
        ``face_type``, a dict ``{face type: (m, k) array}``, a :class:`fesub.fe.SolidFaces`, or a
        :class:`~fesub.contact.geometry.FaceSet` built on the master body's nodes (e.g.
        ``FaceSet.from_mesh(mesh, "zmax")`` of the mesh the body was made from: a node set or a
        Gmsh physical surface). Corners counter-clockwise seen from the open side.
    face_type : str, optional
        ``tri3``, ``quad4``, ``tri6``, ``quad8`` or ``quad9`` for an (m, k) array.
    mu : float or sequence, optional
        Coulomb friction coefficient (>= 0), one for all slave nodes or one per node; default 0.
    friction : law or sequence of laws, optional
        Instead of ``mu``: a friction law (:class:`~.friction.Coulomb`,
        :class:`~.friction.StaticKinetic`, :class:`~.friction.Stribeck`,
        :class:`~.friction.UserLaw` or a callable ``v -> mu`` of the slip speed in m/s), one for
        all slave nodes or one per node; a ``UserLaw`` sends the step's sweeps to Python.
    name : str, optional
        Label of the interface in results.
    reach : float, optional
        Search distance (m): a slave farther than this from every master face is open without a
        frame (default: the median face size, see :class:`~fesub.contact.geometry.FaceSet`).
    tangent_ref : (3,) array, optional
        Reference direction of the first tangent ``t1`` (default: the axis least aligned with the
        master surface's mean normal).
    """

    #: the contact frame is always taken at the deformed positions, every step
    geometry = "deformed"

    def __init__(self, slave_body, slave_nodes, master_body, master_faces, mu=None, *, friction=None,
                 face_type=None, name: str | None = None, reach: float | None = None, tangent_ref=None):
        self.slave_body, self.master_body = slave_body, master_body
        self.slave_nodes = node_array("slave_nodes", slave_nodes)
        if isinstance(master_faces, FaceSet):
            # its faces by node number (the set must be built on the master body's nodes)
            reach = master_faces.reach if reach is None else reach
            tangent_ref = master_faces.tangent_ref if tangent_ref is None else tangent_ref
            master_faces, face_type = _blocks(master_faces), None
        elif master_faces is None:
            raise ParameterError("master_faces: give the master faces (node arrays, SolidFaces or a FaceSet)")
        self.master_faces, self.face_type = master_faces, face_type
        self.reach, self.tangent_ref = reach, tangent_ref
        if mu is not None and friction is not None:
            raise ParameterError("give the friction as mu (Coulomb coefficients) or as friction (laws), not both")
        self.laws = friction if friction is not None else (0.0 if mu is None else mu)
        code, params, user = law_arrays(self.laws, self.slave_nodes.size)
        #: per slave node: the stick limit (dimensionless; the Coulomb coefficient)
        self.mu = params[:, 0].copy()
        self.law_code, self.law_params, self.law_user = code, params, user
        self.name = name

    def face_set(self, X) -> FaceSet:
        """The master faces on the master body's node positions ``X`` ((N, 3), m), checked
        (zero areas, orientation, non-manifold edges: :class:`~fesub.errors.MeshError`)."""
        return FaceSet(X, self.master_faces, self.face_type, reach=self.reach, tangent_ref=self.tangent_ref)

    def __repr__(self) -> str:
        return f"ContactInterface3D({self.slave_body!r}: {self.slave_nodes.size} slave nodes on {self.master_body!r})"


def _blocks(fs: FaceSet) -> dict:
    """{face type: (m, k) node array} of a FaceSet's faces."""
    from ..geometry.faces import FACE_TYPES

    out = {}
    for name, (code, k) in FACE_TYPES.items():
        sel = fs.ftype == code
        if sel.any():
            out[name] = fs.conn[sel, :k].copy()
    return out


